B
Identity_2J²¤?-À^=ÔQ@~µc?