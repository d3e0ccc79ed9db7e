
BxJZw'gt∏VµBª≠ü(ÓjçÚ