one
"two