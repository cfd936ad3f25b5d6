module go_burn

go 1.19
