import 'reflect-metadata';
import { Field, ID, Int, ObjectType } from 'type-graphql';
import { DateTimeScalar } from '../scalars.js';

@ObjectType('MerchantWebhookDelivery', {
  description: 'One event sent to one endpoint, as its latest attempt left it.',
})
export class MerchantWebhookDelivery {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  eventType!: string;

  @Field(() => String, { description: 'pending, succeeded or failed.' })
  status!: string;

  @Field(() => Int)
  attempts!: number;

  @Field(() => Int, { nullable: true, description: "The latest attempt's HTTP status; null when none answered." })
  httpStatus!: number | null;

  @Field(() => String, {
    nullable: true,
    description: 'Why the latest attempt failed, when the receiver did not answer.',
  })
  error!: string | null;

  @Field(() => String, { nullable: true, description: "The start of the latest attempt's response body." })
  responseExcerpt!: string | null;

  @Field(() => DateTimeScalar)
  createdAt!: Date;

  @Field(() => DateTimeScalar, { nullable: true })
  deliveredAt!: Date | null;
}

@ObjectType('MerchantWebhookEndpoint', { description: 'A webhook endpoint (never its secret) and its deliveries.' })
export class MerchantWebhookEndpoint {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  url!: string;

  @Field(() => [String], { description: 'The event types sent here; empty: every type.' })
  events!: string[];

  @Field(() => Boolean)
  enabled!: boolean;

  @Field(() => DateTimeScalar)
  createdAt!: Date;

  @Field(() => [MerchantWebhookDelivery], { description: 'The latest 20 deliveries, newest event first.' })
  deliveries!: MerchantWebhookDelivery[];
}

@ObjectType('MerchantWebhookEndpointSummary', { description: 'A webhook endpoint without its deliveries.' })
export class MerchantWebhookEndpointSummary {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  url!: string;

  @Field(() => [String])
  events!: string[];

  @Field(() => Boolean)
  enabled!: boolean;

  @Field(() => DateTimeScalar)
  createdAt!: Date;
}

@ObjectType('FailedWebhooksRedelivery', { description: 'The failed deliveries queued again, due at once.' })
export class FailedWebhooksRedelivery {
  @Field(() => [ID])
  deliveryIds!: string[];
}

@ObjectType('MerchantWebhookEndpointChange', {
  description: 'An endpoint after a change; its signing secret only when one was just issued (add, rotate).',
})
export class MerchantWebhookEndpointChange {
  @Field(() => MerchantWebhookEndpointSummary)
  endpoint!: MerchantWebhookEndpointSummary;

  @Field(() => String, { nullable: true, description: 'The new signing secret: shown only in this answer.' })
  secret!: string | null;

  @Field(() => DateTimeScalar, {
    nullable: true,
    description: 'After a rotation: until when the previous secret also signs.',
  })
  previousSecretExpiresAt!: Date | null;
}

@ObjectType('MerchantHttpHeader', { description: 'A response header: lower-case name, repeated values joined.' })
export class MerchantHttpHeader {
  @Field(() => String)
  name!: string;

  @Field(() => String)
  value!: string;
}

@ObjectType('MerchantWebhookAttempt', { description: 'One HTTP attempt of a delivery and what the receiver answered.' })
export class MerchantWebhookAttempt {
  @Field(() => Int)
  attempt!: number;

  @Field(() => Int, { nullable: true, description: 'Null when the receiver did not answer.' })
  httpStatus!: number | null;

  @Field(() => Int)
  latencyMs!: number;

  @Field(() => String, { nullable: true })
  error!: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      "The receiver's answer as kept: whole up to 64 KiB (its first 1,024 bytes once cleared after 30 days).",
  })
  response!: string | null;

  @Field(() => Boolean, { description: 'Whether `response` is less than the whole answer.' })
  responseTruncated!: boolean;

  @Field(() => Int, { nullable: true, description: "The whole answer's size in bytes, when known." })
  responseSize!: number | null;

  @Field(() => [MerchantHttpHeader], {
    nullable: true,
    description: "The answer's headers; null when not kept (no answer, or cleared after 30 days).",
  })
  responseHeaders!: MerchantHttpHeader[] | null;

  @Field(() => DateTimeScalar)
  at!: Date;
}

@ObjectType('MerchantWebhookDeliveryDetail', { description: 'A delivery with the body it sends and every attempt.' })
export class MerchantWebhookDeliveryDetail {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  endpointId!: string;

  @Field(() => String)
  eventType!: string;

  @Field(() => String)
  status!: string;

  @Field(() => String, { description: 'The JSON body every attempt sent.' })
  requestBody!: string;

  @Field(() => [MerchantWebhookAttempt])
  attempts!: MerchantWebhookAttempt[];
}

@ObjectType('MerchantWebhookTestResult', {
  description: 'What the endpoint answered to a test event (type kassa.test), sent once and not stored.',
})
export class MerchantWebhookTestResult {
  @Field(() => String, { description: 'The JSON body sent, signed as deliveries are.' })
  requestBody!: string;

  @Field(() => Int, { nullable: true, description: 'Null when the receiver did not answer.' })
  httpStatus!: number | null;

  @Field(() => Int)
  latencyMs!: number;

  @Field(() => String, { nullable: true })
  error!: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      "The receiver's answer as kept: whole up to 64 KiB (its first 1,024 bytes once cleared after 30 days).",
  })
  response!: string | null;

  @Field(() => Boolean, { description: 'Whether `response` is less than the whole answer.' })
  responseTruncated!: boolean;

  @Field(() => Int, { nullable: true, description: "The whole answer's size in bytes, when known." })
  responseSize!: number | null;

  @Field(() => [MerchantHttpHeader], {
    nullable: true,
    description: "The answer's headers; null when the receiver did not answer.",
  })
  responseHeaders!: MerchantHttpHeader[] | null;
}
