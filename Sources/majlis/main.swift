import CWebSocketsShim
print(majlis_lws_pre())
