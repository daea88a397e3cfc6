-- A session as its reads need it, with its items, quotes, networks and bound transactions, as one JSON text
-- (src/db/sessions/checkout-session.read.ts): a call is a short statement whose plan PL/pgSQL keeps per connection,
-- where the query itself was parsed and planned on every read. Amounts travel as text (never JSON numbers), times as
-- epoch milliseconds.
CREATE OR REPLACE FUNCTION kassa_read_session(p_id uuid) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN (
    SELECT json_build_array(
             s.id, s.organisation_id, o.name, o.deleted_at IS NOT NULL, s.owner_user_id, s.status::text, s.source,
             s.from_payment_link, s.anonymous, s.requires_payer_identity, s.identity_options,
             s.product_payment_link_id, s.fiat_currency, s.total_amount_fiat::text, s.crypto_currency,
             s.total_amount_crypto::text, (extract(epoch FROM s.expires_at) * 1000)::bigint, s.overpaid,
             s.bound_tx_hash, (extract(epoch FROM s.bound_at) * 1000)::bigint,
             (extract(epoch FROM s.bound_tx_checked_at) * 1000)::bigint, s.payer_wallet_address, s.chain_id,
             s.failure_reason, s.amount_received::text, s.amount_received_late::text, s.amount_pending::text,
             s.rest_amount::text, (extract(epoch FROM s.quoted_at) * 1000)::bigint,
             o.underpayment_tolerance_percent::text, o.late_payment_window_minutes, s.user_id, s.user_email,
             s.user_telegram_id, s.user_username, s.metadata, (extract(epoch FROM s.created_at) * 1000)::bigint,
             (extract(epoch FROM s.updated_at) * 1000)::bigint,
             (SELECT COALESCE(json_agg(json_build_array(i.name, i.quantity, i.unit_price::text, i.total_price::text,
                                                        i.product_id) ORDER BY i.position), '[]')
                FROM checkout_session_items i WHERE i.session_id = s.id),
             (SELECT COALESCE(json_agg(json_build_array(q.ticker, q.asset_id, q.unit_price_fiat::text, q.amount::text,
                                                        q.base_amount::text, q.amount_step::text, q.offset_steps,
                                                        q.rate_source, (extract(epoch FROM q.rated_at) * 1000)::bigint,
                                                        q.rounding) ORDER BY q.position), '[]')
                FROM checkout_session_quotes q WHERE q.session_id = s.id),
             (SELECT COALESCE(json_agg(json_build_array(n.network, n.chain_id, n.wallet_address) ORDER BY n.position),
                              '[]')
                FROM checkout_session_networks n WHERE n.session_id = s.id),
             (SELECT COALESCE(json_agg(json_build_array(t.id, t.network, t.chain_id, t.tx_hash, t.crypto_currency,
                                                        t.payer_wallet_address, t.state, t.reason_code, t.reason,
                                                        (extract(epoch FROM t.seen_on_chain_at) * 1000)::bigint,
                                                        t.client_address,
                                                        (extract(epoch FROM t.created_at) * 1000)::bigint)
                                       ORDER BY t.created_at, t.id), '[]')
                FROM checkout_session_transactions t WHERE t.session_id = s.id))::text
      FROM checkout_sessions s
      JOIN organisations o ON o.id = s.organisation_id
     WHERE s.id = p_id);
END;
$$;
