import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { generateSecret, sign, webhookHeaders } from '../../../src/platform/webhooks/signature.js';

// Our signatures checked by the reference verifier of the Standard Webhooks specification (the
// `standardwebhooks` package), and against the specification's own example.
describe('Standard Webhooks signatures', () => {
  it('matches the example of the specification', () => {
    // https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const body = '{"test": 2432232314}';
    expect(sign(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, body)).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('makes secrets of 32 random bytes that the reference verifier accepts', () => {
    const secret = generateSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(generateSecret()).not.toBe(secret);
    const body = JSON.stringify({ id: 'e', type: 'offer.published', timestamp: '2027-07-01T10:00:00+02:00', data: {} });
    const headers = webhookHeaders([secret], 'e', Math.floor(Date.now() / 1000), body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('signs with several secrets side by side; the verifier accepts either, and refuses a changed body', () => {
    const [a, b, c] = [generateSecret(), generateSecret(), generateSecret()];
    const body = '{"id":"x"}';
    const headers = webhookHeaders([a, b], 'x', Math.floor(Date.now() / 1000), body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(a).verify(body, headers)).toEqual({ id: 'x' });
    expect(new Webhook(b).verify(body, headers)).toEqual({ id: 'x' });
    expect(() => new Webhook(c).verify(body, headers)).toThrow();
    expect(() => new Webhook(a).verify('{"id":"y"}', headers)).toThrow();
  });
});
