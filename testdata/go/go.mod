module testprogs

go 1.26
