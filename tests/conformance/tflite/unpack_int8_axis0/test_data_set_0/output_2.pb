B
Identity_2J l/ä