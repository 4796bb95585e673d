firstline
secondline
EOF
thirdline
fourthline
