import CLibWebSockets
import CWebSocketsShim
import Foundation

/// The one libwebsockets protocol callback, for servers and clients alike.
func majlisWebSocketCallback(
    wsi: OpaquePointer?, reason: lws_callback_reasons, user: UnsafeMutableRawPointer?,
    input: UnsafeMutableRawPointer?, length: Int
) -> Int32 {
    guard let wsi else { return 0 }
    let contextUser = lws_context_user(lws_get_context(wsi))
    guard let contextUser else { return 0 }
    let loop = Unmanaged<ServiceLoop>.fromOpaque(contextUser).takeUnretainedValue()
    func connection() -> WebSocketConnection? {
        guard let opaque = lws_get_opaque_user_data(wsi) else { return nil }
        return Unmanaged<WebSocketConnection>.fromOpaque(opaque).takeUnretainedValue()
    }

    switch reason {
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        loop.drainPending()
        return 0

    // Server side.
    case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
        // Out of descriptors but a reserve: hang up before any work (`input` is the socket).
        // So is one more from an address that holds its limit of connections already.
        let ceiling = majlis_lws_fd_ceiling()
        let descriptor = Int32(truncatingIfNeeded: Int(bitPattern: input))
        if ceiling > 0 && descriptor >= ceiling { return 1 }
        return loop.limiter.admit(descriptor) ? 0 : 1
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
        var uri = [CChar](repeating: 0, count: 256)
        let count = lws_hdr_copy(wsi, &uri, Int32(uri.count), WSI_TOKEN_GET_URI)
        let path = count > 0 ? cString(uri) : ""
        // Refused upgrades get an HTTP answer before the close, so a client can tell a wrong
        // path (404) or a refused origin (403) from a dead server.
        guard path == "/v1/signal", loop.serverDelegate != nil else {
            lws_return_http_status(wsi, UInt32(HTTP_STATUS_NOT_FOUND.rawValue), nil)
            return 1
        }
        if let accept = loop.acceptUpgrade, !accept(httpHeader(wsi, "origin"), httpHeader(wsi, "host")) {
            lws_return_http_status(wsi, UInt32(HTTP_STATUS_FORBIDDEN.rawValue), nil)
            return 1
        }
        return 0
    case LWS_CALLBACK_ESTABLISHED:
        var address = [CChar](repeating: 0, count: 64)
        lws_get_peer_simple(wsi, &address, address.count)
        let connection = WebSocketConnection(
            id: ServiceLoop.makeConnectionId(), peer: cString(address), isClient: false, loop: loop, delegate: loop.serverDelegate)
        connection.wsi = wsi
        connection.established = true
        lws_set_opaque_user_data(wsi, Unmanaged.passRetained(connection).toOpaque())
        connection.delegate?.webSocketDidOpen(connection)
        return 0
    case LWS_CALLBACK_HTTP:
        let path = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "/"
        var query = [CChar](repeating: 0, count: 8_192)  // encoded again: up to three times the bytes sent
        let queryLength = majlis_lws_http_query(wsi, &query, Int32(query.count))
        var uri: UnsafeMutablePointer<CChar>?
        var uriLength: Int32 = 0
        let method = lws_http_get_uri_and_method(wsi, &uri, &uriLength)
        var headers: [String: String] = [:]
        for name in HTTPRequest.keptHeaders {
            if let value = httpHeader(wsi, name) { headers[name] = value }
        }
        var address = [CChar](repeating: 0, count: 64)
        lws_get_peer_simple(wsi, &address, address.count)
        let request = HTTPRequest(
            method: httpMethods.indices.contains(Int(method)) ? httpMethods[Int(method)] : "GET", path: path,
            query: queryLength > 0 ? cString(query) : "", headers: headers, peer: cString(address))
        // One Content-Length of digits, or none: two (even equal) could be read two ways, and
        // what follows the shorter would run as a request of its own.
        var length: Int?
        if lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0 {
            guard lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH, 1) == 0 else {
                return loop.refuseHTTP(wsi: wsi, "send one Content-Length")
            }
            let text = httpHeader(wsi, "content-length") ?? ""
            guard !text.isEmpty, text.count <= 18, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int(text) else {
                return loop.refuseHTTP(wsi: wsi, "Content-Length must be a number of bytes")
            }
            length = value
        }
        let chunked = httpHeader(wsi, "transfer-encoding") != nil
        return loop.beginHTTP(request, wsi: wsi, contentLength: length, chunked: chunked)
    case LWS_CALLBACK_HTTP_BODY:
        return loop.receiveHTTPBody(wsi: wsi, bytes: input, length: length)
    case LWS_CALLBACK_HTTP_BODY_COMPLETION:
        return loop.completeHTTPBody(wsi: wsi)
    case LWS_CALLBACK_HTTP_WRITEABLE:
        return loop.writeHTTP(wsi: wsi)
    case LWS_CALLBACK_CLOSED_HTTP:
        loop.closedHTTP(wsi: wsi)
        return 0

    // Client side.
    case LWS_CALLBACK_CLIENT_ESTABLISHED:
        guard let connection = connection() else { return -1 }
        connection.wsi = wsi
        connection.established = true
        connection.delegate?.webSocketDidOpen(connection)
        lws_callback_on_writable(wsi)
        return 0
    case LWS_CALLBACK_OPENSSL_PERFORM_SERVER_CERT_VERIFICATION:
        // `user` is OpenSSL's X509_STORE_CTX and `length` whether the certificate verified. One
        // that did not is still trusted when it is the one the connection was told to trust.
        guard length == 0, let user, let connection = connection() else { return 0 }
        if let trusted = connection.trustedCertificate, trusted.withUnsafeBufferPointer({ majlis_tls_trust_pinned(user, $0.baseAddress) }) == 1 {
            return 0
        }
        connection.rejectedCertificate = String(cString: majlis_tls_verify_error(user))
        return 1
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
        guard let opaque = lws_get_opaque_user_data(wsi) else { return 0 }
        lws_set_opaque_user_data(wsi, nil)
        let connection = Unmanaged<WebSocketConnection>.fromOpaque(opaque).takeRetainedValue()
        let message = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "connection failed"
        loop.closed(connection, code: nil, reason: message)
        return 0

    // Both.
    case LWS_CALLBACK_RECEIVE, LWS_CALLBACK_CLIENT_RECEIVE:
        guard let connection = connection() else { return -1 }
        return loop.receive(connection, wsi: wsi, bytes: input, length: length)
    case LWS_CALLBACK_RECEIVE_PONG, LWS_CALLBACK_CLIENT_RECEIVE_PONG:
        connection()?.touch()
        return 0
    case LWS_CALLBACK_SERVER_WRITEABLE, LWS_CALLBACK_CLIENT_WRITEABLE:
        guard let connection = connection() else { return -1 }
        return loop.flush(connection, wsi: wsi, inOwnCallback: true)
    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
        guard let connection = connection() else { return 0 }
        if let input, length >= 2 {
            let bytes = input.assumingMemoryBound(to: UInt8.self)
            let code = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
            let text = String(decoding: UnsafeBufferPointer(start: bytes + 2, count: length - 2), as: UTF8.self)
            connection.state.withLock { state in
                if state.closeRequest == nil { state.closeRequest = (code, text) }
            }
        }
        return 0
    case LWS_CALLBACK_CLOSED, LWS_CALLBACK_CLIENT_CLOSED:
        guard let opaque = lws_get_opaque_user_data(wsi) else { return 0 }
        lws_set_opaque_user_data(wsi, nil)
        let connection = Unmanaged<WebSocketConnection>.fromOpaque(opaque).takeRetainedValue()
        let request = connection.state.withLock { $0.closeRequest }
        loop.closed(connection, code: request?.code, reason: request?.reason ?? "closed")
        return 0
    default:
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
}

/// Method names by libwebsockets' method index (LWSHUMETH_*).
private let httpMethods = ["GET", "POST", "OPTIONS", "PUT", "PATCH", "DELETE", "CONNECT", "HEAD"]

/// The value of a request header by lower-case name (known to lws, or a custom one), or nil.
private func httpHeader(_ wsi: OpaquePointer, _ name: String) -> String? {
    let known: [String: lws_token_indexes] = [
        "authorization": WSI_TOKEN_HTTP_AUTHORIZATION, "content-type": WSI_TOKEN_HTTP_CONTENT_TYPE,
        "content-length": WSI_TOKEN_HTTP_CONTENT_LENGTH, "accept": WSI_TOKEN_HTTP_ACCEPT,
        "transfer-encoding": WSI_TOKEN_HTTP_TRANSFER_ENCODING, "host": WSI_TOKEN_HOST, "origin": WSI_TOKEN_ORIGIN,
        "range": WSI_TOKEN_HTTP_RANGE, "if-none-match": WSI_TOKEN_HTTP_IF_NONE_MATCH,
    ]
    if let token = known[name] {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        return lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token) >= 0 ? cString(buffer) : nil
    }
    let key = name + ":"
    let length = Int(lws_hdr_custom_length(wsi, key, Int32(key.utf8.count)))
    guard length > 0, length < 4_096 else { return nil }
    var buffer = [CChar](repeating: 0, count: length + 1)
    return lws_hdr_custom_copy(wsi, &buffer, Int32(buffer.count), key, Int32(key.utf8.count)) >= 0 ? cString(buffer) : nil
}

/// The text of a NUL-terminated buffer.
func cString(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
