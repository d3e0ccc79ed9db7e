B
Identity_1Jח'?uO¿צי?X?