B
Identity_1Jb‹ˆçtå%