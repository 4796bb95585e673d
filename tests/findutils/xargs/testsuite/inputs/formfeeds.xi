1234
abcd
