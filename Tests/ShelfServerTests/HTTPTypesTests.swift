import Testing

@testable import ShelfServer

@Suite struct HTTPTypesTests {
    @Test func targetsDecodeStrictly() throws {
        let parsed = try HTTPRequest.parseTarget("/api/search?q=%E5%AE%87+x&limit=5")
        #expect(parsed.path == "/api/search")
        #expect(parsed.query.map(\.value) == ["宇 x", "5"])
        #expect(throws: HTTPError.self) { try HTTPRequest.parseTarget("/a/%zz") }
        #expect(throws: HTTPError.self) { try HTTPRequest.parseTarget("/a/%00b") }
        #expect(throws: HTTPError.self) { try HTTPRequest.parseTarget("/a/%2e%2e/etc") }
        #expect(throws: HTTPError.self) { try HTTPRequest.parseTarget("/a?x=%ff") }
    }
}
