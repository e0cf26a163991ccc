Breducemin_6JU/
ÀJ½¿íCÕ¿