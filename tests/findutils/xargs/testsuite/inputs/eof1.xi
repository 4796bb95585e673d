firstline
secondline
  _
thirdline
fourthline
