first nonblank line
second nonblank line

third nonblank line

fourth nonblank line
