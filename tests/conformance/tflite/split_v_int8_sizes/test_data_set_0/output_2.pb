B
Identity_2J"ö