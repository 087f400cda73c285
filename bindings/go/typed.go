package orrerywasm

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/orrery/orrery/engine/wire"
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
func (m *Module) Link(ctx context.Context, req wire.LinkRequest) (wire.LinkResponse, error) {
	return Invoke[wire.LinkResponse](ctx, m, "cassini.link", req)
}

// Rank runs "cassini.rank": placement candidates ranked by their links'
// compatibility.
func (m *Module) Rank(ctx context.Context, req wire.RankRequest) (wire.RankResponse, error) {
	return Invoke[wire.RankResponse](ctx, m, "cassini.rank", req)
}

// Plan runs "shockwave.plan": the next rounds of a GPU cluster from
// Shockwave's market.
func (m *Module) Plan(ctx context.Context, req wire.ShockwavePlanRequest) (wire.ShockwavePlanResponse, error) {
	return Invoke[wire.ShockwavePlanResponse](ctx, m, "shockwave.plan", req)
}

// Predict runs "shockwave.predict": every job's predictions (remaining
// runtime and its spread, mean epoch, fair finish time) without a plan.
func (m *Module) Predict(ctx context.Context, req wire.ShockwavePredictRequest) (wire.ShockwavePredictResponse, error) {
	return Invoke[wire.ShockwavePredictResponse](ctx, m, "shockwave.predict", req)
}
