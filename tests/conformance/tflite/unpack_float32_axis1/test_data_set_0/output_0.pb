BIdentityJÆ1¿û6¿±¸
>šÝ>