import Foundation

/// System: ping, getLicense and getOpenSubsonicExtensions are answered in the registry; tokenInfo here.
extension SubsonicAPI {
    /// tokenInfo (apiKeyAuthentication): whose key `apiKey` is. The call must be made with the
    /// key itself, as the extension says; other credentials are error 42.
    func tokenInfo(_ call: SubsonicCall) throws -> SubsonicReply {
        let user = try call.signedIn
        guard call.parameters.has("apiKey") else { throw SubsonicError(42, "tokenInfo tells about an API key: sign in with apiKey") }
        return .element("tokenInfo", SubsonicTokenInfo(username: user.name))
    }
}
