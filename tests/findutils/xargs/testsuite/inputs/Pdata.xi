sleep 2 && echo one
sleep 1 && echo two
echo three
