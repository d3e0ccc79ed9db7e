B
Identity_2J‰@HK¿\âŒ¿zçæ¿