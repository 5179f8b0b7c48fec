from store.clock import store_clock_is_frozen, store_today


def store_clock(request):
    """Lets every page (admin included) say when the store's clock is frozen."""
    return {"store_clock_frozen": store_clock_is_frozen(), "store_today": store_today()}
