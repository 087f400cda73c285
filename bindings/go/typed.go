package orrerywasm

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/orrery/orrery"
)

// Invoke runs op with the request encoded as JSON and decodes the response
// into a Resp. It works for every operation of the schema, including ones
// added after this package was written.
func Invoke[Resp any](ctx context.Context, m *Module, op string, request any) (Resp, error) {
	var resp Resp
	req, err := json.Marshal(request)
	if err != nil {
		return resp, fmt.Errorf("orrerywasm: %s: encoding the request: %w", op, err)
	}
	out, err := m.Call(ctx, op, req)
	if err != nil {
		return resp, err
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return resp, fmt.Errorf("orrerywasm: %s: decoding the response: %w", op, err)
	}
	return resp, nil
}

// Link runs "cassini.link": the best rotation of the jobs sharing one link.
func (m *Module) Link(ctx context.Context, req orrery.LinkRequest) (orrery.LinkResponse, error) {
	return Invoke[orrery.LinkResponse](ctx, m, "cassini.link", req)
}

// Profile runs "cassini.profile": one job's quantized iteration, and the
// period found in a measured series or events.
func (m *Module) Profile(ctx context.Context, req orrery.ProfileRequest) (orrery.ProfileResponse, error) {
	return Invoke[orrery.ProfileResponse](ctx, m, "cassini.profile", req)
}

// Rank runs "cassini.rank": placement candidates ranked by their links'
// compatibility.
func (m *Module) Rank(ctx context.Context, req orrery.RankRequest) (orrery.RankResponse, error) {
	return Invoke[orrery.RankResponse](ctx, m, "cassini.rank", req)
}

// Plan runs "shockwave.plan": the next rounds of a GPU cluster from
// Shockwave's market.
func (m *Module) Plan(ctx context.Context, req orrery.ShockwavePlanRequest) (orrery.ShockwavePlanResponse, error) {
	return Invoke[orrery.ShockwavePlanResponse](ctx, m, "shockwave.plan", req)
}

// Predict runs "shockwave.predict": every job's predictions (remaining
// runtime and its spread, mean epoch, fair finish time) without a plan.
func (m *Module) Predict(ctx context.Context, req orrery.ShockwavePredictRequest) (orrery.ShockwavePredictResponse, error) {
	return Invoke[orrery.ShockwavePredictResponse](ctx, m, "shockwave.predict", req)
}
