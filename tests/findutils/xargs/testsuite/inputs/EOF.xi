one
two
 EOF	
three
four
