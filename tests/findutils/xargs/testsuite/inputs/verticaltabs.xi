qwer 6789
