B
Identity_1J’¤ŸÄ