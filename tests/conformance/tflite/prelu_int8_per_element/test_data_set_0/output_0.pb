BIdentityJдйй╖ЦHЖх·╬
PJги├╗·поиN╫