one
"two
three