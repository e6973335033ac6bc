import CMicroHTTPD

extension ShelfServer {
    /// The libmicrohttpd loaded at run time (`MHD_get_version`), for `shelf version`.
    public static var microhttpdVersion: String? {
        guard let text = shelf_http_version() else { return nil }
        return String(cString: text)
    }
}
