one
two
_
three
four