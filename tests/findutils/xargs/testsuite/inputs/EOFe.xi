one
two
 EOFe	
three
four
