BIdentityJ$RÔ
8ñ¥(8t9#ôyGÈŒåÎUÒH*¯N€éØ³úO‹ì