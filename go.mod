module github.com/orrery/orrery

go 1.26
