B
Identity_1J~j¿ˇô>≤à?bé©ø