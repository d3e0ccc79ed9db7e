B
Identity_1J®ð÷¿Äã•?æ~)>×aG¾