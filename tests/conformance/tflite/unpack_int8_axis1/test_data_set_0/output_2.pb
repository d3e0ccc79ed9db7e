B
Identity_2Jw'жн