Breducemin_7JU/
ÀJ½¿íCÕ¿