// A Go caller of the perps token service, standard library only: registers a
// fresh key for a new user (Connect JSON on the internal listener), creates a
// named token and deletes it (REST, signed with crypto/ed25519).
//
//	go run docs/examples/go/create_delete.go
package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

func env(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}

// call sends a JSON body and decodes the JSON answer; an error status is the
// service's {"code", "message", "details"} body (Connect errors have
// {"code": "not_found", "message"} instead).
func call(method, url string, body any, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("content-type", "application/json")
	// The key registry is for operators: their secret (by default the one the service's first
	// start wrote in .data/redis/operator-secret). REST calls carry their own signature instead.
	if strings.Contains(url, "UserKeyService") {
		req.Header.Set("authorization", "Bearer "+os.Getenv("OPERATOR_SECRET"))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		return fmt.Errorf("%s %s: HTTP %d: %s", method, url, res.StatusCode, answer)
	}
	return json.Unmarshal(answer, out)
}

// uuid4 is a random version-4 UUID (the standard library has none).
func uuid4() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// nowMs is Unix time in whole milliseconds: the signed text carries plain
// decimal integers, as strconv.FormatInt writes them.
func nowMs() int64 { return time.Now().UnixMilli() }

func sign(key ed25519.PrivateKey, message string) string {
	return hex.EncodeToString(ed25519.Sign(key, []byte(message)))
}

func main() {
	api := env("API", "http://127.0.0.1:8080")
	internal := env("INTERNAL", "http://127.0.0.1:9090")
	public, private, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	userID := uuid4()
	empty := map[string]any{}

	key := map[string]string{"userId": userID, "publicKey": hex.EncodeToString(public)}
	if err := call("POST", internal+"/perps.token.v1.UserKeyService/PutUserKey", key, &empty); err != nil {
		panic(err)
	}

	ts := nowMs()
	// Read and trade, from one address: both lists are appended to the signed message.
	scopes, allowedIPs := []string{"read", "trade"}, []string{"203.0.113.7"}
	message := "createToken:" + strconv.FormatInt(ts, 10) + ":3600:go-bot:" + userID +
		":" + strings.Join(scopes, ",") + ":" + strings.Join(allowedIPs, ",")
	var created struct{ ExpiresAt, ID, Token string }
	create := map[string]any{
		"signature": sign(private, message), "timestamp": ts, "userId": userID,
		"expiresIn": 3600, "name": "go-bot", "scopes": scopes, "allowedIps": allowedIPs,
	}
	if err := call("POST", api+"/user/tokens", create, &created); err != nil {
		panic(err)
	}
	fmt.Printf("created token %s expires %s\n", created.ID, created.ExpiresAt)

	// A platform service checks the token with its caller's address (Connect JSON).
	var checked struct {
		Active bool
		Scopes []string
	}
	check := map[string]any{"token": created.Token, "clientIp": "203.0.113.7"}
	if err := call("POST", internal+"/perps.token.v1.TokenIntrospectionService/IntrospectToken", check, &checked); err != nil {
		panic(err)
	}
	fmt.Printf("introspect from 203.0.113.7: active=%t scopes=%s\n", checked.Active, strings.Join(checked.Scopes, ","))

	ts = nowMs()
	message = "deleteToken:" + strconv.FormatInt(ts, 10) + ":" + created.ID + ":" + userID
	remove := map[string]any{
		"signature": sign(private, message), "timestamp": ts, "tokenId": created.ID, "userId": userID,
	}
	if err := call("DELETE", api+"/user/tokens", remove, &empty); err != nil {
		panic(err)
	}
	fmt.Printf("deleted token %s\n", created.ID)

	if err := call("POST", internal+"/perps.token.v1.UserKeyService/DeleteUserKey", key, &empty); err != nil {
		panic(err)
	}
	fmt.Println("key removed")
}
