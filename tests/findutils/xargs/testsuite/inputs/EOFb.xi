one
two
 bEOF	
three
four
