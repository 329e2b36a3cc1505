module example.org/gobot

go 1.19
