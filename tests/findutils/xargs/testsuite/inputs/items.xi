 	
dumb
 s  s 
ff
rr
	t		t	
vv
 	