   this is
"quoted 	stuff"  
and \
an embedded   newline
with 'single	quotes' as well.
