B
Identity_1J6õæ