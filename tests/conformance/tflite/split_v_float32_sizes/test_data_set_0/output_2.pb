B
Identity_2J¢5¿­¬ò>