B
Identity_1J›¾”ó„SàÒ\Hå