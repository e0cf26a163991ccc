
BlogitsJ(Iæ‡?°B@yï@¿ßEÀ²ôN¿8Å¿Ð§?ZèDÀgìZ@ZBq¿