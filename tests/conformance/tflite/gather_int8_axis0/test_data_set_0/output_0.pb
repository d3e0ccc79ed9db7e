BIdentityJ
#èYş€ş€