BIdentityJ	EV
Ó}‡?>