B
Identity_2J•~¿ªS¿Äe¯¿£«½