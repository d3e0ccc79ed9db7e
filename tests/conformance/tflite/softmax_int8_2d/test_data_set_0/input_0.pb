
BxJ­†í˜9C`Oqƒp¨*–UqfYS·