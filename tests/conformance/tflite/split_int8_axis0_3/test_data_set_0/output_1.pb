B
Identity_1JhÈß