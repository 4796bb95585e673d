foo bar
baz 
ugh
